"""Reverse-mode automatic differentiation: backward, grad, custom Functions, modes."""

from ember._C import _core
from ember.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "is_grad_enabled", "is_inference_mode_enabled"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, _core.TensorBase):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs, is_grads_batched=False):
    from ember._ops.creation import ones_like

    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs, strict=False)):
        if g is None:
            if out.requires_grad:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._data.dtype.kind != "f":
                    raise RuntimeError(
                        f"grad can be implicitly created only for real scalar outputs but got "
                        f"{out.dtype}")
                grads.append(ones_like(out))
            else:
                grads.append(None)
        else:
            if not isinstance(g, _core.TensorBase):
                raise TypeError(f"gradients can be either Tensors or None, but got "
                                f"{type(g).__name__}")
            if tuple(g.shape) != tuple(out.shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape!r} and "
                    f"output[{i}] has a shape of {out.shape!r}.")
            grads.append(g)
    return tuple(grads)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Compute the gradients of ``tensors`` with respect to the graph's leaves and
    accumulate them into their ``.grad``.

    Args:
        tensors: tensors whose gradients are computed (scalars unless
            ``grad_tensors`` is given).
        grad_tensors: the gradient of some scalar with respect to each of ``tensors``.
        retain_graph: keep the graph's saved tensors for another backward (defaults to
            ``create_graph``).
        create_graph: record the backward itself, for higher-order derivatives.
        inputs: accumulate only into these tensors' ``.grad``.
    """
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    else:
        grad_tensors = _as_tuple(grad_tensors)
    for t in tensors:
        if not t.requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn")
    grads = _make_grads(tensors, grad_tensors)  # as PyTorch: the values' types first
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    from ember.autograd.graph import GradientEdge

    inputs = _as_tuple((inputs,) if isinstance(inputs, GradientEdge) else inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if create_graph and inputs is None:
        import warnings

        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between "
            "the parameter and its gradient which can cause a memory leak. We recommend using "
            "autograd.grad when creating the graph to avoid this. If you have to use this "
            "function, make sure to reset the .grad fields of your parameters to None after "
            "use to break the cycle and avoid the leak.", stacklevel=2)
    pairs = [(t, g) for t, g in zip(tensors, grads, strict=False) if g is not None]
    results = _core.run_backward(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs),
                                 bool(retain_graph), bool(create_graph), inputs, True, True)
    if inputs is not None:
        # non-leaf inputs get their .grad here (leaves were handled by the engine)
        for t, g in zip(inputs, results, strict=False):
            if isinstance(t, _core.TensorBase) and t._grad_fn is not None and g is not None:
                t._grad = g if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, as a tuple.

    No ``.grad`` is touched. ``allow_unused=True`` returns None for an input the outputs
    do not depend on (zeros with ``materialize_grads=True``). An input may also be a
    :class:`~ember.autograd.graph.GradientEdge`.
    """
    from ember.autograd.graph import GradientEdge

    if isinstance(inputs, GradientEdge):
        inputs = (inputs,)
    if materialize_grads and any(isinstance(i, GradientEdge) for i in _as_tuple(inputs)):
        raise RuntimeError("materialize_grads cannot be used when the given input is a "
                           "GradientEdge")
    if is_grads_batched:
        raise NotImplementedError("ember.autograd.grad does not support is_grads_batched=True "
                                  "(it has no vmap): call it once per grad_outputs row")
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
        if len(grad_outputs) != len(outputs):
            raise RuntimeError(
                f"grad requires one grad_output per output: got {len(grad_outputs)} for "
                f"{len(outputs)} outputs")
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in outputs:
        if not t.requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn")
    grads = _make_grads(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    pairs = [(t, g) for t, g in zip(outputs, grads, strict=False) if g is not None]
    results = _core.run_backward(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs),
                                 bool(retain_graph), bool(create_graph), inputs_t,
                                 True, False)
    if not allow_unused:
        for i, r in enumerate(results):
            if r is None:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
    if materialize_grads:
        from ember._ops.creation import zeros_like

        results = tuple(zeros_like(i) if r is None else r
                        for i, r in zip(inputs_t, results, strict=False))
    return results


from ember.autograd import functional  # noqa: E402
from ember.autograd.anomaly_mode import (  # noqa: E402
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
)
from ember.autograd.function import Function, FunctionCtx, once_differentiable  # noqa: E402
from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402

__all__ += ["gradcheck", "gradgradcheck", "GradcheckError", "Function", "FunctionCtx",
            "once_differentiable", "functional", "detect_anomaly", "set_detect_anomaly",
            "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

from ember.autograd import graph, variable  # noqa: E402
from ember.autograd._engine_modes import (  # noqa: E402
    enforce_grad_layout_policy,
    is_multithreading_enabled,  # noqa: F401 - in dir(torch.autograd), not its __all__
    is_view_replay_enabled,  # noqa: F401
    set_multithreading_enabled,
)
from ember.autograd.variable import Variable  # noqa: E402


def variable(*args, **kwargs):  # noqa: F811 - as torch, the name is this function, not the module
    """Deprecated and removed: raises, as ``torch.autograd.variable`` does (use ember.tensor)."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")


__all__ += ["graph", "variable", "Variable", "set_multithreading_enabled",
            "enforce_grad_layout_policy", "grad_mode"]

from ember.autograd import grad_mode  # noqa: E402
