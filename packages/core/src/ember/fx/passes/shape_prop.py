"""Shape propagation (as ``torch.fx.passes.shape_prop``): ShapeProp and TensorMetadata.

``ShapeProp(gm).propagate(*example_inputs)`` runs the graph once and records on every node
that produced tensors ``node.meta['tensor_meta']`` (a :class:`TensorMetadata`, or a nested
structure of them for tuple/list/dict results) and ``node.meta['type']`` (the Python type of
the result).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ember.fx.interpreter import Interpreter
from ember.fx.node import Node, map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor (the fields of torch's)."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _channels_last_strides(shape) -> tuple:
    # NHWC (or NDHWC) strides of a tensor of logical shape N, C, spatial...
    n_spatial = len(shape) - 2
    c = shape[1]
    strides = [0] * len(shape)
    s = 1
    strides[1] = s
    s *= max(c, 1)
    for i in range(len(shape) - 1, 1, -1):
        strides[i] = s
        s *= max(shape[i], 1)
    strides[0] = s
    return tuple(strides) if n_spatial >= 0 else ()


def _memory_format(t):
    import ember

    if t.is_contiguous():
        return ember.contiguous_format
    shape, stride = tuple(t.shape), tuple(t.stride())
    if len(shape) == 4 and stride == _channels_last_strides(shape):
        return ember.channels_last
    if len(shape) == 5 and stride == _channels_last_strides(shape):
        return ember.channels_last_3d
    return None


def _extract_tensor_metadata(result) -> TensorMetadata:
    """The :class:`TensorMetadata` of tensor ``result``."""
    return TensorMetadata(result.shape, result.dtype, bool(result.requires_grad),
                          tuple(result.stride()), _memory_format(result), False, {})


def record_meta(n: Node, result) -> None:
    """Record on node ``n`` what ShapeProp records of its result ``result``:
    ``meta['tensor_meta']`` (where it holds tensors) and ``meta['type']``."""
    import ember

    found = False

    def extract(obj):
        nonlocal found
        if isinstance(obj, ember.Tensor):
            found = True
            return _extract_tensor_metadata(obj)
        return obj

    meta = map_aggregate(result, extract)
    if found:
        n.meta["tensor_meta"] = meta
    n.meta["type"] = type(result)


class ShapeProp(Interpreter):
    """Runs a GraphModule on example inputs and records each node's tensor metadata.

    Args:
        module: the GraphModule.
        fake_mode: kept for torch's signature; ember has no fake tensors, so it must be
            None (the example inputs are real).

    Examples::

        >>> gm = ember.fx.symbolic_trace(model)  # doctest: +SKIP
        >>> ShapeProp(gm).propagate(ember.randn(2, 3))  # doctest: +SKIP
        >>> [n.meta["tensor_meta"].shape for n in gm.graph.nodes]  # doctest: +SKIP
    """

    def __init__(self, gm, fake_mode=None) -> None:
        super().__init__(gm)
        if fake_mode is not None:
            raise NotImplementedError("ShapeProp: ember has no fake tensors; pass real example "
                                      "inputs and fake_mode=None")
        self.fake_mode = None
        self.fake_module = None
        self.real_module = self.module

    def run_node(self, n: Node):
        """Run ``n`` and record ``meta['tensor_meta']`` and ``meta['type']`` of its result."""
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with "
                               f"meta={n.meta}") from e
        record_meta(n, result)
        return result

    def propagate(self, *args):
        """Run the graph on ``args``, recording metadata; returns the graph's output."""
        return super().run(*args)
