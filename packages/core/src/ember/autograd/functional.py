"""Higher-level autograd: Jacobians, Hessians and their products with vectors.

PyTorch's ``torch.autograd.functional`` on ember's reverse-mode engine. Forward-mode
products (``jvp``, ``hvp``) use the double-backward trick: the gradient of a
vector-Jacobian product with respect to its (dummy) vector is a Jacobian-vector
product. ``vectorize`` is accepted and ignored (one backward per row of the result).
"""

from __future__ import annotations

from ember._C._core import TensorBase

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# -- helpers (as in PyTorch, so that errors read the same) ------------------------

def _as_tuple(inp, arg_name=None, fn_name=None):
    """(was it a tuple, the tuple of Tensors); TypeError naming the argument."""
    if arg_name is None and fn_name is None:
        return inp if isinstance(inp, tuple) else tuple(inp) if isinstance(inp, list) \
            else (inp,)
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, TensorBase):
            where = f"the value at index {i} has type" if is_tuple else \
                f"the given {arg_name} has type"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but {where} {type(el)}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    # Always new Tensor objects, so that the inputs given as arguments can be told
    # apart from the same tensors captured by the user's function.
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], TensorBase):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=False)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs.")
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad that skips outputs without grad and returns None for unused inputs."""
    from ember.autograd import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=False)
             if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad(tuple(p[0] for p in pairs), inputs, tuple(p[1] for p in pairs),
                allow_unused=True, create_graph=create_graph, retain_graph=retain_graph)


_STAGE_ERRORS = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    from ember._ops.creation import zeros_like

    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_ERRORS[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _zeros_requiring_grad(t):
    from ember._ops.creation import zeros_like

    return zeros_like(t).requires_grad_()


def _one_hot(t, j):
    """A tensor shaped like ``t``, all zeros but 1 at flat position ``j``."""
    from ember._ops.creation import zeros_like

    e = zeros_like(t)
    e._data.reshape(-1)[j] = 1
    return e


# -- public API ---------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    r"""The product of a vector ``v`` with the Jacobian of ``func`` at ``inputs``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor or a tuple of Tensors.
        inputs (tuple of Tensors or Tensor): the point where the Jacobian is taken.
        v (tuple of Tensors or Tensor): shaped like the output of ``func``; may be left
            out when that output has a single element.
        create_graph (bool, optional): compute output and result differentiably.
        strict (bool, optional): raise if an input does not influence the outputs
            (instead of returning zeros for it).

    Returns:
        (func_output, vjp), ``vjp`` shaped like the inputs.

    Example::

        >>> def exp_reducer(x):
        ...     return x.exp().sum(dim=1)
        >>> inputs = ember.rand(4, 4)
        >>> v = ember.ones(4)
        >>> ember.autograd.functional.vjp(exp_reducer, inputs, v)
    """
    from ember.autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    r"""The product of the Jacobian of ``func`` at ``inputs`` with a vector ``v``.

    Computed with the double-backward trick (two reverse passes).

    Args:
        func (function): takes Tensor inputs, returns a Tensor or a tuple of Tensors.
        inputs (tuple of Tensors or Tensor): the point where the Jacobian is taken.
        v (tuple of Tensors or Tensor): shaped like the inputs; may be left out when
            the input is a single element.
        create_graph (bool, optional): compute output and result differentiably.
        strict (bool, optional): raise if an input does not influence the outputs.

    Returns:
        (func_output, jvp), ``jvp`` shaped like the output.
    """
    from ember.autograd.grad_mode import enable_grad

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the "
                               "user-provided function is a single Tensor with a single "
                               "element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        grad_outputs = tuple(_zeros_requiring_grad(out) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    if create_graph:
        with enable_grad():
            grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
            result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    else:
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    r"""The Jacobian of ``func`` at ``inputs``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor or a tuple of Tensors.
        inputs (tuple of Tensors or Tensor): the point where the Jacobian is taken.
        create_graph (bool, optional): compute the Jacobian differentiably.
        strict (bool, optional): raise if an input does not influence an output.
        vectorize (bool, optional): accepted for compatibility; ember computes one
            row at a time either way.
        strategy (str, optional): only ``"reverse-mode"`` is supported.

    Returns:
        The Jacobian: a Tensor of shape ``output.shape + input.shape`` for one input
        and one output; a tuple over inputs or outputs when either is a tuple; a tuple
        of tuples (``[i][j]``: output i, input j) when both are.

    Example::

        >>> def exp_reducer(x):
        ...     return x.exp().sum(dim=1)
        >>> ember.autograd.functional.jacobian(exp_reducer, ember.rand(2, 2)).shape
        ember.Size([2, 2, 2])
    """
    from ember._ops.join import stack
    from ember.autograd.grad_mode import enable_grad

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        raise NotImplementedError(
            'ember.autograd.functional.jacobian: strategy="forward-mode" is not supported: '
            'ember has no forward-mode AD. Use strategy="reverse-mode".')
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or "
                "`vectorize=False`.".replace("torch.", "ember."))
        from ember._ops.creation import zeros_like

        jacobian = []
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            for j in range(out.nelement()):
                vj = _autograd_grad((out,), inputs, (_one_hot(out, j),), retain_graph=True,
                                    create_graph=create_graph)
                for el_idx, (row, vj_el, inp_el) in enumerate(zip(rows, vj, inputs, strict=False)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                "create_graph=True.")
                        row.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {el_idx}. This is not allowed in strict mode.")
                        row.append(zeros_like(inp_el))
            jacobian.append(tuple(
                (stack(row, 0) if row else inputs[el_idx].new_zeros((0,)))
                .reshape(tuple(out.shape) + tuple(inputs[el_idx].shape))
                for el_idx, row in enumerate(rows)))
        jacobian = _grad_postprocess(tuple(jacobian), create_graph)
        return _tuple_postprocess(jacobian, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    r"""The Hessian of the scalar function ``func`` at ``inputs``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor with one element.
        inputs (tuple of Tensors or Tensor): the point where the Hessian is taken.
        create_graph (bool, optional): compute the Hessian differentiably.
        strict (bool, optional): raise if an input does not influence the output.
        vectorize (bool, optional): accepted for compatibility, ignored.
        outer_jacobian_strategy (str, optional): only ``"reverse-mode"``.

    Returns:
        A Tensor of shape ``input.shape + input.shape`` for one input, else a tuple of
        tuples where ``[i][j]`` is the block of inputs i and j.

    Example::

        >>> def pow_reducer(x):
        ...     return x.pow(3).sum()
        >>> ember.autograd.functional.hessian(pow_reducer, ember.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, TensorBase):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.reshape(())

    def jac_func(*inp):
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_setup(func, inputs, v, create_graph, strict, name):
    """Shared start of vhp and hvp: inputs, v, outputs and the first gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], TensorBase):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                           "contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    r"""The product of a vector ``v`` with the Hessian of the scalar function ``func``.

    Args:
        func (function): takes Tensor inputs, returns a Tensor with one element.
        inputs (tuple of Tensors or Tensor): the point where the Hessian is taken.
        v (tuple of Tensors or Tensor): shaped like the inputs.
        create_graph (bool, optional): compute output and result differentiably.
        strict (bool, optional): raise if an input does not influence the output.

    Returns:
        (func_output, vhp), ``vhp`` shaped like the inputs.
    """
    from ember.autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_function_setup(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    r"""The product of the Hessian of the scalar function ``func`` with a vector ``v``.

    Computed with the double-backward trick; for a twice continuously differentiable
    ``func`` it equals :func:`vhp`, which is cheaper.

    Args:
        func (function): takes Tensor inputs, returns a Tensor with one element.
        inputs (tuple of Tensors or Tensor): the point where the Hessian is taken.
        v (tuple of Tensors or Tensor): shaped like the inputs.
        create_graph (bool, optional): compute output and result differentiably.
        strict (bool, optional): raise if an input does not influence the output.

    Returns:
        (func_output, hvp), ``hvp`` shaped like the inputs.
    """
    from ember.autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_function_setup(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(_zeros_requiring_grad(inp) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))
