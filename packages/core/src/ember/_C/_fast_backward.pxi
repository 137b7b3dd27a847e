# Included by _core.pyx (one compiled module): the compiled backward formulas of the hottest
# nodes, on arrays.
#
# NOTE [ Compiled backward formulas ]
# An op's backward works on Tensors (NOTE [ Ops are Nodes ]), so that create_graph=True can
# record it; without create_graph every Tensor op of a formula still pays the per-op path
# (wrapping, grad-mode checks, promotion) for a result that is thrown away after use. The
# nodes that the compiled fast paths record (+ - * / and the unary methods of
# UNARY_FAST_PATH, _fast_paths.pxi) carry a FAST_* code; when the engine runs one of them
# without create_graph, on real floating arrays of NumPy and with no saved-tensors hooks, it
# computes the same formula here with the ufuncs (on several threads for large arrays:
# ufunc1/ufunc2), in the same order of operations as the
# node's Python backward (so the gradients are bit-identical), and wraps each gradient once.
# Anything else (complex dtypes, another device, a released graph, hooks on saved tensors)
# returns None and takes the node's own backward, which also raises the errors.

# UNARY_FAST_PATH's indices, for the formulas below
cdef enum:
    U_EXP = 0
    U_LOG = 1
    U_TANH = 2
    U_SIGMOID = 3
    U_NEG = 4
    U_RELU = 5
    U_SQRT = 6
    U_ABS = 7
    U_SIN = 8
    U_COS = 9

cdef object _np_negative = _np.negative
cdef object _np_multiply = _np.multiply
cdef object _np_subtract = _np.subtract
cdef object _np_divide = _np.true_divide
cdef object _np_greater = _np.greater
cdef object _np_sin = _np.sin
cdef object _np_cos = _np.cos


cdef inline bint is_real_float_array(object a):
    return (type(a) is _ndarray
            and (<cnp.dtype>cnp.PyArray_DESCR(<cnp.ndarray>a)).kind == b'f')


cdef inline bint usable_number(object v):
    return type(v) is float or type(v) is int


cdef object saved_operand(Node node, Py_ssize_t i):
    """Slot ``i`` of ``node``'s saved values as an array (version-checked) or a Python
    number; None where the compiled formula does not apply."""
    cdef SavedTensor s
    cdef long long now
    v = node._saved[i]
    if type(v) is not SavedTensor:
        return v if usable_number(v) else None
    s = <SavedTensor>v
    if s.unpack_hook is not None:
        return None
    if s.is_output:
        now = 0 if s.vc is None else s.vc.value
        data = s.data
    else:
        now = version_of(<TensorBase>s.tensor)
        data = (<TensorBase>s.tensor)._data
    if now != s.version:
        raise RuntimeError(s.modified_message(node, now))
    return data if is_real_float_array(data) else None


cdef object compiled_backward(Node node, list grads):
    """The gradients of ``node``'s arguments through its compiled formula, or None where it
    does not apply (NOTE [ Compiled backward formulas ])."""
    cdef int code = node._fast
    cdef object g, a, b, y
    cdef tuple need
    if len(grads) != 1:
        return None
    gt = grads[0]
    if gt is None:
        return None
    g = (<TensorBase>gt)._data
    if not is_real_float_array(g):
        return None
    need = node.needs_input_grad
    if code == FAST_ADD + OP_ADD:
        return node.summed_to_inputs((gt, gt))
    if code == FAST_ADD + OP_SUB:
        return node.summed_to_inputs((gt, wrap(ufunc1(_np_negative, g)) if need[1] else None))
    if code == FAST_UNARY + U_NEG:
        return (wrap(ufunc1(_np_negative, g)),)
    if node._saved is None:
        return None  # released: the node's own backward raises PyTorch's error
    if code == FAST_ADD + OP_MUL or code == FAST_ADD + OP_DIV:
        a = saved_operand(node, 0)
        b = saved_operand(node, 1)
        if a is None or b is None:
            return None
        if code == FAST_ADD + OP_MUL:
            # g * b, g * a
            return node.summed_to_inputs((
                wrap(ufunc2(_np_multiply, g, b)) if need[0] else None,
                wrap(ufunc2(_np_multiply, g, a)) if need[1] else None))
        # g / b, -g * a / (b * b)
        return node.summed_to_inputs((
            wrap(ufunc2(_np_divide, g, b)) if need[0] else None,
            wrap(ufunc2(_np_divide, ufunc2(_np_multiply, ufunc1(_np_negative, g), a),
                        ufunc2(_np_multiply, b, b)))
            if need[1] else None))
    y = saved_operand(node, 0)  # the unary ops save one value: x or y
    if y is None:
        return None
    if code == FAST_UNARY + U_EXP:      # g * y
        return (wrap(ufunc2(_np_multiply, g, y)),)
    if code == FAST_UNARY + U_TANH:     # g * (1 - y * y)
        return (wrap(ufunc2(_np_multiply, g,
                            ufunc2(_np_subtract, 1, ufunc2(_np_multiply, y, y)))),)
    if code == FAST_UNARY + U_SIGMOID:  # g * (y * (1 - y))
        return (wrap(ufunc2(_np_multiply, g,
                            ufunc2(_np_multiply, y, ufunc2(_np_subtract, 1, y)))),)
    if code == FAST_UNARY + U_RELU:     # g * (y > 0)
        return (wrap(ufunc2(_np_multiply, g, ufunc2(_np_greater, y, 0))),)
    if code == FAST_UNARY + U_LOG:      # g / x
        return (wrap(ufunc2(_np_divide, g, y)),)
    if code == FAST_UNARY + U_SQRT:     # g / (2 * y)
        return (wrap(ufunc2(_np_divide, g, ufunc2(_np_multiply, 2, y))),)
    if code == FAST_UNARY + U_SIN:      # g * cos(x)
        return (wrap(ufunc2(_np_multiply, g, ufunc1(_np_cos, y))),)
    if code == FAST_UNARY + U_COS:      # -g * sin(x)
        return (wrap(ufunc2(_np_multiply, ufunc1(_np_negative, g), ufunc1(_np_sin, y))),)
    return None
