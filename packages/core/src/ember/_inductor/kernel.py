"""A compiled fused group at run time: :class:`FusedKernel`, one autograd node per call.

NOTE [ A fused group is one autograd node ]
Calling a :class:`FusedKernel` on tensors runs the core's ``apply`` with a Node subclass of
its own (as a built-in op does), so the group's outputs have one ``grad_fn``
(``<Kernel>Backward0``) that saves the group's inputs. Its backward runs the generated
backward loop (it recomputes the forward from the saved inputs) and sums the gradients of
broadcast inputs back to their shapes. Two cases take the group's ops one by one instead
(the *replay*, the eager ops the group was fused from): inputs the kernel was not compiled
for (another dtype or shape of a parameter, a CUDA tensor, or a shape that breaks the
broadcast the loop indexes by), and a backward with ``create_graph=True``, which replays
the forward under grad mode and differentiates it with autograd, so the gradient has a
history and higher-order gradients are right.
"""

from __future__ import annotations

import math

import numpy as np

from ember._C import _core
from ember._C._core import Node, TensorBase

__all__ = ["FusedKernel"]


def _sum_to(g, shape):
    """``g`` (domain-shaped) summed over the dimensions ``shape`` broadcasts along."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + d for d, s in enumerate(shape)
                                      if s == 1 and g.shape[lead + d] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


class FusedKernel:
    """A fused group compiled to a C kernel; called like the ops it replaces, with the
    group's input tensors, it returns the group's output tensor(s).

    Attributes:
        name: the kernel's name (the node's name in the compiled graph).
        source: the generated C source.
        path: the compiled shared library.
        ops: the fx node names of the fused ops, in order.
    """

    def __init__(self, name, spec, module, path, source, input_shapes, replay, ops,
                 reduced_shape=None):
        self.__name__ = self.__qualname__ = name
        self.__module__ = "ember._inductor"
        self.name, self.spec, self.source, self.path, self.ops = name, spec, source, path, ops
        self._replay = replay
        self._dtype = np.dtype(spec.dtype)
        self._nout = len(spec.outputs)  # full-size outputs
        self._reduced = reduced_shape  # the shape of the trailing sum/mean, or None
        self._input_shapes = tuple(tuple(s) for s in input_shapes)
        self._dynamic = spec.domain is None
        if self._dynamic:
            self._full = spec.blocks.index("full")
            self._rank = len(self._input_shapes[self._full])
        else:
            self._domain = tuple(spec.domain)
            self._n = math.prod(self._domain)
        self._node_cls = type(name, (_FusedNode,), {
            "saves_inputs": tuple(range(len(spec.blocks))), "kernel": self,
            "fwd": staticmethod(module.forward), "bwd": staticmethod(module.backward)})

    def __repr__(self) -> str:
        return f"<FusedKernel {self.name}: {' '.join(self.ops)}>"

    def _layout(self, shapes):
        """(n, domain, runtime parameters) for inputs of these shapes, or None when the
        kernel was not compiled for them."""
        if not self._dynamic:
            return (self._n, self._domain, ()) if shapes == self._input_shapes else None
        domain = shapes[self._full]
        if len(domain) != self._rank:
            return None
        params = []
        for shape, block, seen in zip(shapes, self.spec.blocks, self._input_shapes):
            if len(shape) != len(seen):
                return None
            if block == "full":
                if shape != domain:
                    return None
                continue
            lead = len(domain) - len(shape)
            lo, hi = block if block is not None else (len(domain), len(domain))
            expect = tuple(domain[d] if lo <= d < hi else 1 for d in range(lead, len(domain)))
            if shape != expect:
                return None
            if block is not None:
                params += [math.prod(domain[hi:]), math.prod(domain[lo:hi])]
        return math.prod(domain), domain, tuple(params)

    def __call__(self, *tensors):
        dtype = self._dtype
        shapes = []
        for t in tensors:
            if not isinstance(t, TensorBase):
                return self._replay(*tensors)
            d = t._data
            if type(d) is not np.ndarray or d.dtype != dtype:
                return self._replay(*tensors)
            shapes.append(d.shape)
        layout = self._layout(tuple(shapes))
        if layout is None:
            return self._replay(*tensors)
        # the layout rides along as a plain argument: forward receives it after the arrays
        return _core.apply(self._node_cls, *tensors, layout)


class _FusedNode(Node):
    """The autograd node of one call of a FusedKernel (NOTE [ A fused group is one
    autograd node ])."""

    kernel = None

    def forward(self, *args):
        k = self.kernel
        self.layout = layout = args[-1]
        n, domain, params = layout
        arrays = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in args[:-1]]
        if k._reduced is not None:
            outs = [np.empty(domain, k._dtype) for _ in range(k._nout)]
            red = np.empty(k._reduced, k._dtype)
            self.fwd(red.size, *arrays, *outs, red, *params)  # one row per reduced value
            return tuple(outs) + (red,) if outs else red
        if k._nout == 1:
            out = np.empty(domain, k._dtype)
            self.fwd(n, *arrays, out, *params)
            return out
        outs = [np.empty(domain, k._dtype) for _ in range(k._nout)]
        self.fwd(n, *arrays, *outs, *params)
        return tuple(outs)

    def backward(self, *grads):
        k = self.kernel
        saved = self.saved_tensors
        need = self.needs_input_grad
        if _core.is_grad_enabled():
            return _replay_backward(k, saved, grads, need)
        n, domain, params = self.layout
        dtype = k._dtype
        ins = [s._data if s._data.flags.c_contiguous else np.ascontiguousarray(s._data)
               for s in saved]
        gouts = []
        shapes = (domain,) * k._nout + ((k._reduced,) if k._reduced is not None else ())
        for g, shape in zip(grads, shapes):
            if g is None:
                gouts.append(np.zeros(shape, dtype))
                continue
            a = g._data
            if a.shape != shape or a.dtype != dtype or not a.flags.c_contiguous:
                a = np.ascontiguousarray(np.broadcast_to(a, shape), dtype)
            gouts.append(a)
        gins = [np.empty(domain, dtype) for _ in ins]  # every one: the loop stores all
        self.bwd(n, *ins, *gouts, *gins, *params)
        wrap = _core.make_tensor_from_array
        return tuple(wrap(g if g.shape == a.shape else _sum_to(g, a.shape)) if nd else None
                     for g, a, nd in zip(gins, ins, need))


def _replay_backward(kernel, saved, grads, need):
    """The gradients by differentiating the replayed eager ops (create_graph=True)."""
    import ember

    wanted = [s for s, nd in zip(saved, need) if nd]
    outs = kernel._replay(*saved)
    outs = outs if isinstance(outs, tuple) else (outs,)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
    got = ember.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                              create_graph=True, allow_unused=True)
    it = iter(got)
    result = []
    for s, nd in zip(saved, need):
        if not nd:
            result.append(None)
            continue
        g = next(it)
        result.append(g if g is not None else ember.zeros_like(s))
    return tuple(result)
