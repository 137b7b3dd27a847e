"""``ember.nn.grad``: the gradients of the convolutions with respect to their input and
weight, as functions (PyTorch's ``torch.nn.grad``)."""

from __future__ import annotations

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _conv(nd):
    from ember.nn import functional as F

    return (F.conv1d, F.conv2d, F.conv3d)[nd - 1]


def _vjp(nd, x, w, grad_output, wrt, stride, padding, dilation, groups):
    """The gradient of ``conv(x, w)`` with respect to ``x`` (``wrt == 0``) or ``w``, for
    the output gradient ``grad_output`` (the convolution is linear in each)."""
    from ember.autograd import grad
    from ember.autograd.grad_mode import enable_grad, is_grad_enabled

    create = is_grad_enabled() and (grad_output.requires_grad or (x if wrt else w).requires_grad)
    target = (x, w)[wrt].detach().requires_grad_()
    args = [x, w]
    args[wrt] = target
    with enable_grad():
        out = _conv(nd)(args[0], args[1], None, stride, padding, dilation, groups)
        if tuple(out.shape) != tuple(grad_output.shape):
            raise RuntimeError(
                f"grad_output has shape {tuple(grad_output.shape)}, but the convolution of the "
                f"given sizes gives {tuple(out.shape)}")
        (g,) = grad(out, target, grad_output, create_graph=create)
    return g


def _input_grad(nd):
    def fn(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        from ember._ops.creation import zeros

        x = zeros(tuple(input_size), dtype=weight.dtype, device=weight.device)
        return _vjp(nd, x, weight, grad_output, 0, stride, padding, dilation, groups)

    fn.__name__ = fn.__qualname__ = f"conv{nd}d_input"
    fn.__doc__ = f"""The gradient of ``conv{nd}d`` with respect to its input.

    Args:
        input_size: the shape of the input (batch and channels included).
        weight: the convolution's weight.
        grad_output: the gradient of the convolution's output.
        stride, padding, dilation, groups: as :func:`ember.nn.functional.conv{nd}d`.

    Returns:
        A tensor of ``input_size``.
    """
    return fn


def _weight_grad(nd):
    def fn(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        from ember._ops.creation import zeros

        w = zeros(tuple(weight_size), dtype=input.dtype, device=input.device)
        return _vjp(nd, input, w, grad_output, 1, stride, padding, dilation, groups)

    fn.__name__ = fn.__qualname__ = f"conv{nd}d_weight"
    fn.__doc__ = f"""The gradient of ``conv{nd}d`` with respect to its weight.

    Args:
        input: the convolution's input.
        weight_size: the shape of the weight.
        grad_output: the gradient of the convolution's output.
        stride, padding, dilation, groups: as :func:`ember.nn.functional.conv{nd}d`.

    Returns:
        A tensor of ``weight_size``.
    """
    return fn


conv1d_input, conv2d_input, conv3d_input = (_input_grad(n) for n in (1, 2, 3))
conv1d_weight, conv2d_weight, conv3d_weight = (_weight_grad(n) for n in (1, 2, 3))
