"""``linear`` and ``bilinear``.

NOTE [ Linear as one node ]
``linear(x, W, b)`` is one graph node: its forward folds any leading batch dims of
``x`` into the rows of one GEMM (``x2 @ W.T``) and adds the bias in place (a large GEMM
runs in pieces on ember's threads, each adding its block of the bias: NOTE [ Threaded
GEMM ]); its backward is two GEMMs and a column sum (``g2 @ W``, ``g2.T @ x2``,
``g2.sum(0)``), run on the arrays directly unless ``create_graph=True`` asks for a
recorded (differentiable) backward.
"""

from __future__ import annotations

import math

from ember._backend._blas import matmul
from ember._C._core import Node, is_grad_enabled
from ember._ops._util import TensorBase, apply, cpp_type_name, type_name, wrap

__all__ = ["linear", "bilinear", "linear_cross_entropy"]


class Linear(Node):
    """``x @ W.T + b`` with the leading dims of ``x`` folded into one matrix product."""

    saves_inputs = (0, 1)

    def forward(self, x, w, b):
        n, k = w.shape
        x2 = x if x.ndim == 2 else x.reshape(math.prod(x.shape[:-1]), k)
        self._bias_1d = b is None or b.shape == (n,)
        y = matmul(x2, w.T, b if b is not None and self._bias_1d else None)
        if x.ndim != 2:
            y = y.reshape(x.shape[:-1] + (n,))
        if not self._bias_1d:
            y += b
        return y

    def backward(self, g):
        x, w = self.saved_tensors
        need = self.needs_input_grad
        n, k = w.shape
        gx = gw = gb = None
        cplx = w._data.dtype.kind == "c"  # PyTorch's convention: conjugated operands
        if is_grad_enabled():  # create_graph: a recorded backward
            g2 = g.reshape(math.prod(g.shape[:-1]), n)
            if cplx:
                x, w = x.conj(), w.conj()
            if need[0]:
                gx = (g2 @ w).reshape(tuple(x.shape))
            if need[1]:
                gw = g2.mT @ x.reshape(math.prod(x.shape[:-1]), k)
            if need[2]:
                gb = g2.sum(0) if self._bias_1d else g
            return gx, gw, gb
        ga = g._data
        rows = math.prod(ga.shape[:-1])
        g2 = ga.reshape(rows, n)
        xa, wa = x._data, w._data
        if cplx:
            xa, wa = xa.conj(), wa.conj()
        if need[0]:
            gx = wrap(matmul(g2, wa).reshape(xa.shape))
        if need[1]:
            gw = wrap(matmul(g2.T, xa.reshape(rows, k)))
        if need[2]:
            gb = wrap(g2.sum(0)) if self._bias_1d else g
        return gx, gw, gb


def _check_tensor(fn, name, pos, x):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _expand_error(src_shape, target):
    """PyTorch's error for expanding ``src_shape`` to ``target``."""
    if len(src_shape) > len(target):
        return RuntimeError(
            f"expand(torch.FloatTensor{{{list(src_shape)}}}, size={list(target)}): the number "
            f"of sizes provided ({len(target)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(src_shape)})")
    off = len(target) - len(src_shape)
    for i in range(len(src_shape) - 1, -1, -1):
        if src_shape[i] != 1 and src_shape[i] != target[off + i]:
            return RuntimeError(
                f"The expanded size of the tensor ({target[off + i]}) must match the existing "
                f"size ({src_shape[i]}) at non-singleton dimension {off + i}.  Target sizes: "
                f"{list(target)}.  Tensor sizes: {list(src_shape)}")
    return None


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)`` (or ``(in_features,)``).
        bias: ``(out_features,)`` or None.

    Returns:
        ``(*, out_features)``.

    See :class:`~ember.nn.Linear`.
    """
    _check_tensor("linear", "input", 1, input)
    _check_tensor("linear", "weight", 2, weight)
    x, w = input._data, weight._data
    if x.ndim == 0 or w.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{x.ndim}D and {w.ndim}D")
    if w.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {w.ndim}D")
    if bias is not None:
        _check_tensor("linear", "bias", 3, bias)
    if w.ndim == 1:  # a vector of weights: a dot product per row
        out = input.matmul(weight)
        return out if bias is None else out + bias
    if x.dtype != w.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{cpp_type_name(x.dtype)} != {cpp_type_name(w.dtype)}")
    n, k = w.shape
    if x.shape[-1] != k:
        rows = math.prod(x.shape[:-1])
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x.shape[-1]} "
                           f"and {k}x{n})")
    if x.dtype.kind == "b":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if bias is not None:
        b = bias._data
        if b.dtype != w.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                               f"{type_name(b.dtype)} and {type_name(w.dtype)}")
        out_shape = x.shape[:-1] + (n,)
        err = _expand_error(b.shape, out_shape)
        if err is not None:
            raise err
    return apply(Linear, input, weight, bias)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., k] = input1 @ weight[k] @ input2 + bias[k]``.

    Args:
        input1: ``(*, in1_features)``.
        input2: ``(*, in2_features)``, the same leading dims.
        weight: ``(out_features, in1_features, in2_features)``.
        bias: ``(out_features,)`` or None.

    See :class:`~ember.nn.Bilinear`.
    """
    for pos, (name, t) in enumerate((("input1", input1), ("input2", input2),
                                     ("weight", weight)), 1):
        _check_tensor("bilinear", name, pos, t)
    s1, s2, sw = input1.shape, input2.shape, weight.shape
    if len(s1) != len(s2):
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {len(s1)} and {len(s2)}")
    for i in range(len(s1) - 1):
        if s1[i] != s2[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {s1[i]} and {s2[i]}")
    if len(sw) != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, got {len(sw)}D")
    if s1[-1] != sw[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{s1[-1]} but expected {sw[1]}")
    if s2[-1] != sw[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{s2[-1]} but expected {sw[2]}")
    if bias is not None and bias.shape[0] != sw[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {sw[0]}")
    out_f, in1, in2 = sw
    lead = tuple(s1[:-1])
    a = input1.reshape(-1, in1)
    c = input2.reshape(-1, in2)
    # (N, in1) @ (in1, out * in2), then the contraction with input2 over in2
    t = (a @ weight.permute(1, 0, 2).reshape(in1, out_f * in2)).reshape(-1, out_f, in2)
    y = (t * c.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(lead + (out_f,))


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    r"""The cross-entropy of a linear layer's output: ``cross_entropy(linear(input,
    linear_weight, linear_bias), target, ...)``.

    ``linear_weight`` is :math:`(C, d_1, ..., d_K, \text{in})` for a K-dimensional loss
    (logits :math:`(N, C, d_1, ..., d_K)`). PyTorch can run it in batch chunks
    (``options``), which saves memory; ember computes the reference form (``options`` are
    validated and accepted, the numbers are the same up to rounding).

    Args:
        input: :math:`(N, \text{in})` or :math:`(\text{in})`.
        linear_weight: :math:`(C, \text{in})` or :math:`(C, d_1, ..., d_K, \text{in})`.
        target: class indices, or class probabilities of the logits' shape.
        linear_bias: :math:`(C)` or :math:`(C, d_1, ..., d_K)`. Default: None.
        weight, reduction, label_smoothing: as :func:`cross_entropy`.
        ignore_index: as :func:`cross_entropy` (None: -100; it must be None for
            probability targets).
        options (LinearCrossEntropyOptions, optional): chunking settings.

    Examples::

        >>> x, w = ember.randn(4, 8), ember.randn(10, 8)
        >>> F.linear_cross_entropy(x, w, ember.tensor([1, 0, 9, 3])).shape
        ember.Size([])
    """
    import math as _math

    from ember.nn._functional.loss import cross_entropy

    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*batches, num_classes, *out_features)
    probabilities = tuple(target.shape) == logits_shape
    if probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if out_features:
        n = _math.prod(out_features) * num_classes
        linear_weight = linear_weight.reshape(n, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(n)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)
